-- The 50 kernels (by short name) with the most time across every exported trace.
SELECT short_name AS kernel,
       category,
       COUNT(*) AS calls,
       COUNT(DISTINCT trace) AS traces,
       ROUND(SUM(duration_us), 3) AS total_us,
       ROUND(SUM(duration_us) / COUNT(*), 3) AS mean_us
FROM kernels
GROUP BY short_name, category
ORDER BY total_us DESC NULLS LAST, kernel NULLS LAST, category NULLS LAST
LIMIT 50
