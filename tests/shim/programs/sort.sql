-- sqlite3's sorter on 4 threads (PRAGMA threads): building an index and two
-- ORDER BYs over 200,000 rows, with a cache small enough that each sort
-- spills into several sorted runs, which the sorter's threads sort and merge.
PRAGMA threads = 4;
PRAGMA cache_size = -512;
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)
INSERT INTO t SELECT (i * 7919) % 200003, printf('%08d-%s', (i * 104729) % 1000003, hex(i)) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(a), min(b), max(b) FROM t;
SELECT a, b FROM t ORDER BY b LIMIT 3 OFFSET 100000;
SELECT sum(length(b)), count(DISTINCT a) FROM (SELECT a, b FROM t ORDER BY a DESC, b);
PRAGMA integrity_check;
