// The redactor is shared with the guest driver (recordings), so it lives in the contract: the
// `[secret:NAME]` marker and the forms looked for are the same on every side.
export * from '@cubicle/contract/redact';
