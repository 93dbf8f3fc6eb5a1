-- The same op across devices: each op that ran on more than one set of devices (an H100 run
-- and an MI300X run of one model), its calls and time per call on each.
WITH per_device AS (
  SELECT o.op,
         t.devices,
         COUNT(DISTINCT o.trace) AS traces,
         SUM(o.calls) AS calls,
         ROUND(SUM(o.kernel_time_us), 3) AS kernel_time_us
  FROM ops o JOIN traces t ON o.trace = t.trace
  GROUP BY o.op, t.devices
)
SELECT op, devices, traces, calls, kernel_time_us, ROUND(kernel_time_us / calls, 3) AS us_per_call
FROM per_device
WHERE op IN (SELECT op FROM per_device GROUP BY op HAVING COUNT(*) > 1)
ORDER BY op NULLS LAST, devices NULLS LAST
