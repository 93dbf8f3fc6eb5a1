-- What changed against a baseline set: kernel time per trace by category, each set's mean
-- (the sets may hold different numbers of traces), the largest growth first.
WITH now AS (
  SELECT category, SUM(duration_us) / COUNT(DISTINCT trace) AS us_per_trace
  FROM kernels GROUP BY category
), base AS (
  SELECT category, SUM(duration_us) / COUNT(DISTINCT trace) AS us_per_trace
  FROM baseline_kernels GROUP BY category
)
SELECT COALESCE(now.category, base.category) AS category,
       base.us_per_trace AS baseline_us_per_trace,
       now.us_per_trace AS us_per_trace,
       COALESCE(now.us_per_trace, 0) - COALESCE(base.us_per_trace, 0) AS change_us_per_trace
FROM now FULL OUTER JOIN base ON now.category = base.category
ORDER BY change_us_per_trace DESC, category
