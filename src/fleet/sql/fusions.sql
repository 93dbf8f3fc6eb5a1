-- Fusion left on the table: the 50 missing fusions that would save the most, summed over
-- every exported trace (saved time at each trace's chip bandwidth; bytes where no chip was known).
SELECT rule,
       ops,
       COUNT(DISTINCT trace) AS traces,
       SUM(calls) AS calls,
       SUM(saved_bytes_per_call * calls) AS saved_bytes,
       ROUND(SUM(saved_us), 3) AS saved_us
FROM opportunities
GROUP BY rule, ops
ORDER BY saved_us DESC NULLS LAST, saved_bytes DESC NULLS LAST, ops NULLS LAST, rule NULLS LAST
LIMIT 50
