-- A passport as it stood at an instant (EN 18222 ReadDPPVersionByIdAndDate) answers with the log
-- head signed then: each append keeps the head it signed with its event, and creation keeps the
-- head of the empty log with the passport. Of what older versions wrote, only the current heads
-- survive; they are kept where they belong (the last event's, or the empty log's), and the other
-- events stay without one (NULL).
ALTER TABLE "passport" ADD COLUMN "empty_log_head" JSONB;
ALTER TABLE "passport_event" ADD COLUMN "log_head" JSONB;

UPDATE "passport" SET "empty_log_head" = "log_head" WHERE "log_size" = 0;
UPDATE "passport_event" AS e SET "log_head" = p."log_head"
FROM "passport" AS p
WHERE e."passport_id" = p."id" AND e."seq" = p."log_size" - 1;
