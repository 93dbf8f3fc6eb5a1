-- The 50 kernels (by short name) with the most time across every exported trace.
SELECT short_name AS kernel,
       category,
       COUNT(*) AS calls,
       COUNT(DISTINCT trace) AS traces,
       SUM(duration_us) AS total_us,
       SUM(duration_us) / COUNT(*) AS mean_us
FROM kernels
GROUP BY short_name, category
ORDER BY total_us DESC, kernel
LIMIT 50
