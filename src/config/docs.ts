// The README's settings table and `palisade --help`'s list, generated from the declarations
// (groups.ts): what an operator reads is what loadConfig reads. `npm run docs:settings` writes the
// table into README.md; test/config/settings-docs.test.ts fails when it is stale.
import { SETTING_GROUPS, type Role, type SettingGroup } from './groups.ts';

export const README_START = '<!-- settings: generated from src/config/ by `npm run docs:settings`; edit the declarations there -->';
export const README_END = '<!-- settings end -->';

const operatorSettings = (group: SettingGroup) => Object.entries(group.settings).filter(([, s]) => s.internal !== true);

/** The README's tables, one per part, as they stand between the two markers. */
export function settingsTable(): string {
  const parts = SETTING_GROUPS.map((group) => {
    const rows = operatorSettings(group).map(([name, s]) => `| \`${name}\` | ${s.shown} | ${s.help} |`);
    return [`**${group.title}** (${roleList(group.roles)})`, '', '| variable | default | |', '|---|---|---|', ...rows].join('\n');
  });
  return `\n${parts.join('\n\n')}\n`;
}

function roleList(roles: readonly Role[]): string {
  return roles.length === 1 ? `role ${roles[0]}` : `roles ${roles.join(', ')}`;
}

/** Markdown to a terminal's plain text. */
const plain = (markdown: string) => markdown.replace(/`/g, '');

/** A description's first clause, short enough for one line of `--help` (the README has the rest). */
export function oneLine(help: string, width = 72): string {
  const first = plain(help).split(/; |\. /)[0]!;
  if (first.length <= width) return first;
  const cut = first.lastIndexOf(' ', width - 1);
  return `${first.slice(0, cut > 0 ? cut : width - 1)}…`;
}

/** The settings `palisade --help` lists (all roles), or those of one role: name, default, one line. */
export function settingsHelp(role?: Role): string {
  const groups = SETTING_GROUPS.filter((g) => role === undefined || g.roles.includes(role));
  const lines: string[] = [role === undefined ? 'Settings (environment variables), by part and the roles that read them:' : `Settings of the ${role} role (environment variables):`];
  for (const group of groups) {
    lines.push('', `${group.title} (${roleList(group.roles)}):`);
    for (const [name, s] of operatorSettings(group)) lines.push(`  ${name.padEnd(39)} ${plain(s.shown).padEnd(20)} ${oneLine(s.help)}`);
  }
  return lines.join('\n');
}

/** README.md's text with the table between the markers replaced by the generated one. */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) throw new Error(`README.md needs the markers ${README_START} and ${README_END} around the settings table`);
  return readme.slice(0, start + README_START.length) + settingsTable() + readme.slice(end);
}
