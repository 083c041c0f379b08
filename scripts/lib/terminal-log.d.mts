// Types for terminal-log.mjs, which the TypeScript tests import.
export declare function loadTerminalFormat(root: string, options?: { color?: boolean }): Promise<void>;
export declare function terminalLine(line: string): string;
