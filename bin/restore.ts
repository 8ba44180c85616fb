/**
 * `npm run restore -- <file> [--force]`: a backup restored into an empty database or data folder
 * (DATABASE_URL, or the embedded cluster of PASSPORT_DATA_DIR, made when missing), in one
 * transaction; `--force` replaces the four schemas of a database that has them. Stop the platform
 * on that database first. Refused, with nothing written, when the key-encryption key file lacks a
 * key the backup's signing keys are sealed under. The restore holds appends until an admin
 * acknowledges it, and lists the last sequence number of each restored passport for their clients.
 * `--mark-restored`: the same hold and list for a database restored by other means (pg_restore),
 * its trust graph's rows adopted, after this version's migrations are applied to it.
 */
import { BackupError } from '../lib/db/backup-file.js';
import { HEADS_LISTED, markRestored, type RestoredHeads, restore } from '../lib/db/restore.js';
import { kekFile } from '../lib/keys/kek.js';

const USAGE = 'usage: npm run restore -- <file> [--force]  |  npm run restore -- --mark-restored';

/**
 * Events appended after the backup's snapshot are not in it, and the next appends sign their
 * sequence numbers again over other events: the clients of each passport are told its last one first.
 */
function sayHeld(heads: RestoredHeads): void {
  console.log(
    'Appends are held (503 RESTORE_UNACKNOWLEDGED) until an admin acknowledges the restore (POST /issuer/admin/restore/acknowledgement, or the mutation acknowledgeRestore): first tell the clients of each passport its last sequence number below, since any later one they hold is gone and would be signed again over another event.',
  );
  if (heads.file) {
    console.log(`The last sequence number of each of the ${heads.passports} restored passports (more than ${HEADS_LISTED}) is in ${heads.file} (passport_id, log_size, last_seq).`);
    return;
  }
  console.log(heads.passports ? 'Last sequence number of each restored passport:' : 'No passport was restored.');
  for (const { id, logSize } of heads.listed ?? []) console.log(`  ${id}  ${logSize ? logSize - 1 : 'none (empty log)'}`);
}

const args = process.argv.slice(2);
const force = args.includes('--force');
const mark = args.includes('--mark-restored');
const files = args.filter((arg) => arg !== '--force' && arg !== '--mark-restored');
if (mark ? args.length !== 1 : files.length !== 1 || files[0]!.startsWith('--')) {
  console.error(USAGE);
  process.exit(2);
}
try {
  if (mark) {
    sayHeld(await markRestored());
  } else {
    const file = files[0]!;
    const result = await restore(file, { force });
    const { manifest } = result;
    console.log(`Restored ${result.rows} rows of the four services as of ${manifest.snapshotAt} (version ${manifest.project.version}, PostgreSQL ${manifest.postgres.version}) from ${file}.`);
    const tokens = {
      written: 'The token hashes of the backup are in the tokens file: the same tokens work.',
      same: 'The tokens file already holds the backup’s token hashes.',
      kept: 'The tokens file differs from the backup’s token hashes and was kept (--force replaces it).',
      none: 'The backup holds no tokens file (tokens were configured by environment).',
    }[result.tokens];
    console.log(tokens);
    console.log(
      result.kekIds.length ? `The signing keys are sealed under ${result.kekIds.join(', ')}, which ${kekFile()} holds.` : 'The backup holds no signing key sealed under a key-encryption key.',
    );
    sayHeld(result.heads);
  }
} catch (error) {
  if (!(error instanceof BackupError)) throw error;
  console.error(error.message);
  process.exit(1);
}
