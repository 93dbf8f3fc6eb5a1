-- Stragglers: each rank's busy time against its job's mean; in a synchronous job the others
-- wait for the ranks at the top.
SELECT job,
       rank,
       trace,
       busy_us,
       ROUND(busy_us - AVG(busy_us) OVER (PARTITION BY job), 3) AS over_job_mean_us
FROM traces
WHERE error IS NULL
ORDER BY job NULLS LAST, over_job_mean_us DESC NULLS LAST, rank NULLS LAST, trace
