-- Which keys signed a passport's events, and when first and last (PassportRepository.eventKeyRanges,
-- every passport a request shows with its signing keys), read from this index alone: an index-only
-- scan instead of a visit of every event row in the heap. Over 1,000,000 passports of 10 events
-- (a 14 GB event table, 1.2 GB for this index) the statement for 8 passports read 43 buffers
-- instead of 113 and no row of the table instead of 80 (docs/SCALING.md). IF NOT EXISTS: an operator
-- may build it beforehand CONCURRENTLY, without holding the appends (docs/PRISMA.md).
CREATE INDEX IF NOT EXISTS "passport_event_passport_id_kid_recorded_at_idx" ON "passport_event"("passport_id", "kid", "recorded_at");
