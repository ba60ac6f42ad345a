-- Schema 15 (frozen): no change of its own. The number is kept for the allocation tables that
-- are being made on another branch; when that branch lands first its v15.sql replaces this file
-- (and a file made with this placeholder migrates on unchanged).
SELECT 1;
