-- Stragglers: each rank's busy time against its job's mean; in a synchronous job the others
-- wait for the ranks at the top. The mean is of whole nanoseconds, so the same on every run
-- (categories.sql says why).
WITH t AS (
  SELECT job, rank, trace, busy_us, CAST(ROUND(busy_us * 1000) AS BIGINT) AS busy_ns
  FROM traces
  WHERE error IS NULL
)
SELECT job,
       rank,
       trace,
       busy_us,
       ROUND(busy_ns - AVG(busy_ns) OVER (PARTITION BY job)) / 1000 AS over_job_mean_us
FROM t
ORDER BY job NULLS LAST, over_job_mean_us DESC NULLS LAST, rank NULLS LAST, trace
