// `npm run docs:settings`: writes the settings table generated from src/config/ into README.md,
// between its two markers (the prose around it is left as it is).
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../src/config/docs.ts';

const readme = new URL('../README.md', import.meta.url);
const before = readFileSync(readme, 'utf8');
const after = withSettingsTable(before);
if (after === before) console.log('README.md: the settings table is up to date');
else {
  writeFileSync(readme, after);
  console.log('README.md: the settings table was regenerated from src/config/');
}
