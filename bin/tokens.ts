/**
 * `npm run tokens -- rotate`: issues a new admin and a writer token when the ones `npm start` printed
 * are lost (or leaked). Only their hashes are stored; the old tokens stop working when the platform
 * next starts.
 */
import { rotateStoredTokens, tokenLines, tokensFile } from '../lib/auth/tokens.js';

const [command] = process.argv.slice(2);
if (command !== 'rotate') {
  console.error('usage: npm run tokens -- rotate   (issues a new admin and writer token; restart the platform to use them)');
  process.exit(2);
}
try {
  const tokens = await rotateStoredTokens();
  console.log(
    [
      `New access tokens; only their hashes are kept (in ${tokensFile()}). They are shown this once.`,
      ...tokenLines(tokens).map((line) => `  ${line}`),
      'Restart the platform (npm start) for them to take the place of the old ones.',
    ].join('\n'),
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
