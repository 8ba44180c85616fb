/**
 * `npm run backup -- <file>`: one consistent snapshot of the four services' schemas, written while
 * the platform keeps serving (docs/OPERATIONS.md, "Backup and restore"). The same database settings
 * as the platform: DATABASE_URL, or the embedded cluster of PASSPORT_DATA_DIR (running or not).
 */
import { backup } from '../lib/db/backup.js';
import { BackupError } from '../lib/db/backup-file.js';

const [file, ...rest] = process.argv.slice(2);
if (!file || rest.length) {
  console.error('usage: npm run backup -- <file>');
  process.exit(2);
}
const started = performance.now();
try {
  const result = await backup(file);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`Backed up ${result.rows} rows of the four services as of ${result.manifest.snapshotAt} to ${file} (${result.bytes} bytes, ${seconds} s).`);
  if (result.manifest.kekIds.length) console.log(`Its signing keys are sealed under ${result.manifest.kekIds.join(', ')}: keep that key file apart from this backup.`);
} catch (error) {
  if (!(error instanceof BackupError)) throw error;
  console.error(error.message);
  process.exit(1);
}
