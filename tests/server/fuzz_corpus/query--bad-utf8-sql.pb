

SELECT 'ÿ'