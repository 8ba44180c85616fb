/**
 * `npm run restore -- <file> [--force]`: a backup restored into an empty database or data folder
 * (DATABASE_URL, or the embedded cluster of PASSPORT_DATA_DIR, made when missing), in one
 * transaction; `--force` replaces the four schemas of a database that has them. Stop the platform
 * on that database first.
 */
import { BackupError, restore } from '../lib/db/backup.js';
import { kekFile, readKekFile } from '../lib/keys/kek.js';

const args = process.argv.slice(2);
const force = args.includes('--force');
const files = args.filter((arg) => arg !== '--force');
if (files.length !== 1 || files[0]!.startsWith('--')) {
  console.error('usage: npm run restore -- <file> [--force]');
  process.exit(2);
}
const file = files[0]!;
try {
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
  // The KEK is never in a backup: say which one the restored keys need, and whether it is at hand.
  const needed = manifest.kekIds;
  const held = (() => {
    try {
      return readKekFile(kekFile()).ids;
    } catch {
      return [];
    }
  })();
  const missing = needed.filter((id) => !held.includes(id));
  console.log(
    !needed.length
      ? 'The backup holds no sealed signing key.'
      : missing.length
        ? `The signing keys are sealed under ${missing.join(', ')}, which ${kekFile()} does not hold: put the key-encryption key file kept apart from the backups there (or set PASSPORT_KEK_FILE) before starting.`
        : `The signing keys are sealed under ${needed.join(', ')}, which ${kekFile()} holds: the platform can start.`,
  );
} catch (error) {
  if (!(error instanceof BackupError)) throw error;
  console.error(error.message);
  process.exit(1);
}
