-- A restore takes every passport's log back to the backup's snapshot, while a client may hold a
-- head signed after it: the next append would sign another event under a sequence number the
-- platform had already signed and acknowledged, a fork its clients would see without warning. So a
-- restore records itself here (npm run restore, in the transaction that loads the rows; or
-- `npm run restore -- --mark-restored` after a restore by other means), and appends are refused with
-- 503 RESTORE_UNACKNOWLEDGED while any restore is unacknowledged, until an admin, once the clients
-- are told (the restore lists each passport's last sequence number), acknowledges it
-- (POST /issuer/admin/restore/acknowledgement, the mutation acknowledgeRestore).

CREATE TABLE "restore" (
    "id" BIGSERIAL NOT NULL,
    "restored_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "snapshot_at" TIMESTAMPTZ(3),
    "backup" TEXT,
    "passports" INTEGER NOT NULL,
    "acknowledged_at" TIMESTAMPTZ(3),
    "acknowledged_by" TEXT,

    CONSTRAINT "restore_pkey" PRIMARY KEY ("id")
);
