// Operator commands: the secondaries a name server transfers zones to (the data directory's
// secondaries.json). Each entry is one `palisade admin` command (see ADMIN_USAGE in admin.ts); it
// reads the parsed arguments and returns what is printed.
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { checkEntry, keyNameOf, keyNameTaken, readEntries, SECONDARIES_FILE, writeEntries, type SecondaryEntry } from '../dns/transfer/secondaries.ts';
import { parseTsigKey } from '../dns/transfer/tsig.ts';
import { type AdminCommands, domainArg, positiveInt, required, UsageError } from './admin-args.ts';

const secondariesFile = (config: Config | undefined) => join((config ?? loadConfig()).dataDir, SECONDARIES_FILE);

/** A secondary as the operator sees it: the key's name and algorithm, never its secret. */
function shownSecondary(entry: SecondaryEntry): Record<string, unknown> {
  const { tsigKey, ...rest } = entry;
  const key = parseTsigKey(tsigKey);
  return { ...rest, tsig_key: typeof key === 'string' ? key : `${key.algorithm}:${key.name}` };
}

export const secondariesCommands: AdminCommands = {
  'secondary add': ({ values, options }) => {
    const file = secondariesFile(options.config);
    const entry: SecondaryEntry = {
      name: required(values.name, 'name'),
      addresses: values.address ?? [],
      port: values.port === undefined ? 53 : positiveInt(values.port, '--port'),
      tsigKey: required(values['tsig-key'], 'tsig-key'),
      zones: (values.zone ?? []).map((z) => domainArg(z)),
      catalog: values['no-catalog'] !== true,
    };
    const problem = checkEntry(entry);
    if (problem) throw new UsageError(problem);
    const entries = readEntries(file);
    if (entries.some((e) => e.name === entry.name)) throw new UsageError(`a secondary named ${entry.name} exists; remove it first`);
    const sharing = keyNameTaken(entries, entry);
    if (sharing) throw new UsageError(`the TSIG key ${keyNameOf(entry)} is secondary ${sharing.name}'s; each secondary needs a key name of its own (its messages are known by it)`);
    writeEntries(file, [...entries, entry]);
    return shownSecondary(entry);
  },
  'secondary list': ({ options }) => {
    return readEntries(secondariesFile(options.config)).map(shownSecondary);
  },
  'secondary remove': ({ arg, options }) => {
    const file = secondariesFile(options.config);
    const name = required(arg, 'NAME');
    const entries = readEntries(file);
    if (!entries.some((e) => e.name === name)) throw new UsageError(`no secondary named ${name}`);
    writeEntries(file, entries.filter((e) => e.name !== name));
    return { removed: name };
  },
};
