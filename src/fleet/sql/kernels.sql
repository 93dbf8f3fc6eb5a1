-- The 50 kernels (by short name) with the most time across every exported trace; times summed
-- in whole nanoseconds, so the report is the same on every run (categories.sql says why).
WITH k AS (
  SELECT short_name, category, trace, CAST(ROUND(duration_us * 1000) AS BIGINT) AS ns
  FROM kernels
)
SELECT short_name AS kernel,
       category,
       COUNT(*) AS calls,
       COUNT(DISTINCT trace) AS traces,
       CAST(SUM(ns) AS DOUBLE) / 1000 AS total_us,
       ROUND(CAST(SUM(ns) AS DOUBLE) / COUNT(*)) / 1000 AS mean_us
FROM k
GROUP BY short_name, category
ORDER BY total_us DESC NULLS LAST, kernel NULLS LAST, category NULLS LAST
LIMIT 50
