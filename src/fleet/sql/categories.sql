-- Kernel time by category across every exported trace, longest first.
SELECT category,
       COUNT(*) AS kernels,
       COUNT(DISTINCT trace) AS traces,
       ROUND(SUM(duration_us), 3) AS total_us
FROM kernels
GROUP BY category
ORDER BY total_us DESC NULLS LAST, category NULLS LAST
