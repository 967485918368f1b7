/** A start-up failure the operator can fix: printed as one line, exit code 1. */
export class StartupError extends Error {}
