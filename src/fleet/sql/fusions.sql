-- Fusion left on the table: the 50 missing fusions that would save the most, summed over
-- every exported trace (saved time at each trace's chip bandwidth; bytes where no chip was known).
-- Saved time is summed in whole nanoseconds, so the report is the same on every run
-- (categories.sql says why).
WITH o AS (
  SELECT rule, ops, trace, calls, saved_bytes_per_call,
         CAST(ROUND(saved_us * 1000) AS BIGINT) AS saved_ns
  FROM opportunities
)
SELECT rule,
       ops,
       COUNT(DISTINCT trace) AS traces,
       SUM(calls) AS calls,
       SUM(saved_bytes_per_call * calls) AS saved_bytes,
       CAST(SUM(saved_ns) AS DOUBLE) / 1000 AS saved_us
FROM o
GROUP BY rule, ops
ORDER BY saved_us DESC NULLS LAST, saved_bytes DESC NULLS LAST, ops NULLS LAST, rule NULLS LAST
LIMIT 50
