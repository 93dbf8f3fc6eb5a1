-- The same op across devices: each op that ran on more than one set of devices (an H100 run
-- and an MI300X run of one model), its calls and time per call on each. Times are summed in
-- whole nanoseconds, so the report is the same on every run (categories.sql says why).
WITH per_device AS (
  SELECT o.op,
         t.devices,
         COUNT(DISTINCT o.trace) AS traces,
         SUM(o.calls) AS calls,
         SUM(CAST(ROUND(o.kernel_time_us * 1000) AS BIGINT)) AS kernel_ns
  FROM ops o JOIN traces t ON o.trace = t.trace
  GROUP BY o.op, t.devices
)
SELECT op,
       devices,
       traces,
       calls,
       CAST(kernel_ns AS DOUBLE) / 1000 AS kernel_time_us,
       ROUND(CAST(kernel_ns AS DOUBLE) / calls) / 1000 AS us_per_call
FROM per_device
WHERE op IN (SELECT op FROM per_device GROUP BY op HAVING COUNT(*) > 1)
ORDER BY op NULLS LAST, devices NULLS LAST
