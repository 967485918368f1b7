/** Whether a Node.js version string (`process.versions.node`) meets package.json's minimum. */
export function nodeVersionIsEnough(version: string): boolean;
/** Says which Node is needed, which one this is and how to get it, and exits, when it is too old. */
export function requireNodeVersion(what?: string): void;
