/**
 * The result rule for command replies that are free text (Teltonika codec 12/14, GT06 0x15/0x21,
 * JT/T 808 0x1300), one rule for every protocol so a customer sees the same outcome for the
 * same words. Units answer in prose (`DYD=Success!`, `Cut off the fuel supply: Success!`,
 * `Command error!`, `DOUT1:1 DOUT2:0`), so the rule looks for words of failure: a reply that
 * names none is taken as done, and its text is kept for the customer to read.
 */
import type { CommandReply } from './protocol.js';

/**
 * Words with which units report that a command did not run, as whole words so a status line's
 * `Errors:0` is no failure. `not running` is Concox's answer to a relay command already in the
 * asked state ("…the command is not running!").
 */
const FAILURE_WORDS = /\bfail|\berror\b|\binvalid\b|\bunknown command\b|\bunsupported\b|\bnot (?:supported|running|executed|allowed)\b|\bdenied\b|\brefused\b/i;

export function outcomeOfText(text: string): 'succeeded' | 'failed' {
  return FAILURE_WORDS.test(text) ? 'failed' : 'succeeded';
}

/** A reply whose outcome is read from its text; `raw` is copied (frames are views into the read buffer). */
export function textReply(matchKey: number | null, text: string, raw: Buffer): CommandReply {
  return { matchKey, outcome: outcomeOfText(text), text, resultCode: null, raw: Buffer.from(raw) };
}
