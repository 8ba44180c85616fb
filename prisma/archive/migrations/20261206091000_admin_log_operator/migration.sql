-- Who an admin log entry's actor acted for (issue 44): an operator's admin reads its own operator's
-- entries, the platform admin every entry. Before operators the writer token wrote for what is now
-- the operator `default`, and the admin token was the platform's own.

ALTER TABLE "admin_log" ADD COLUMN "operator" TEXT;
UPDATE "admin_log" SET "operator" = 'default' WHERE "role" = 'writer';
