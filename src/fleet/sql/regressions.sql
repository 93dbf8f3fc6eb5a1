-- What changed against a baseline set: kernel time per trace by category, each set's mean
-- (the sets may hold different numbers of traces), the largest growth first. Times are summed
-- in whole nanoseconds and each mean rounded to one, so a set against itself changes by exactly
-- nothing, on every run (categories.sql says why).
WITH current_set AS (
  SELECT category,
         ROUND(CAST(SUM(CAST(ROUND(duration_us * 1000) AS BIGINT)) AS DOUBLE) / COUNT(DISTINCT trace)) / 1000
           AS us_per_trace
  FROM kernels GROUP BY category
), baseline AS (
  SELECT category,
         ROUND(CAST(SUM(CAST(ROUND(duration_us * 1000) AS BIGINT)) AS DOUBLE) / COUNT(DISTINCT trace)) / 1000
           AS us_per_trace
  FROM baseline_kernels GROUP BY category
)
SELECT COALESCE(current_set.category, baseline.category) AS category,
       baseline.us_per_trace AS baseline_us_per_trace,
       current_set.us_per_trace AS us_per_trace,
       ROUND(COALESCE(current_set.us_per_trace, 0) - COALESCE(baseline.us_per_trace, 0), 3) AS change_us_per_trace
FROM current_set FULL OUTER JOIN baseline ON current_set.category = baseline.category
ORDER BY change_us_per_trace DESC NULLS LAST, category NULLS LAST
