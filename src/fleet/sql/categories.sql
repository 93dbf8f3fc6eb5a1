-- Kernel time by category across every exported trace, longest first. Times are summed in
-- whole nanoseconds: a sum of integers is the same in any order, so the report is the same on
-- every run, on any number of threads and in any engine (a sum of reals is not).
WITH k AS (
  SELECT category, trace, CAST(ROUND(duration_us * 1000) AS BIGINT) AS ns
  FROM kernels
)
SELECT category,
       COUNT(*) AS kernels,
       COUNT(DISTINCT trace) AS traces,
       CAST(SUM(ns) AS DOUBLE) / 1000 AS total_us
FROM k
GROUP BY category
ORDER BY total_us DESC NULLS LAST, category NULLS LAST
