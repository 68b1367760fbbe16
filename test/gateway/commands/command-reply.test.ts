/**
 * The one result rule for free-text command replies (gateway/command-reply.ts), on the
 * answers the protocol READMEs name and on texts that only look like failures.
 */
import { describe, expect, it } from 'vitest';
import { outcomeOfText, textReply } from '../../../gateway/command-reply.js';

describe('command reply text rule', () => {
  it.each([
    ['DYD=Success!', 'succeeded'],
    ['HFYD=Success!', 'succeeded'],
    ['Cut off the fuel supply: Success!', 'succeeded'],
    ['Success', 'succeeded'],
    ['OK', 'succeeded'],
    ['Set OK!', 'succeeded'],
    ['#FM2=262032761721396,26203,07.02.05', 'succeeded'], // unknown text: done, kept
    ['GPS:1 Sat:7 Errors:0', 'succeeded'], // a count of errors is no failure
    ['DYD=Fail!', 'failed'],
    ['Relay,1#:Fail', 'failed'],
    ['Command error!', 'failed'],
    ['Invalid parameter', 'failed'],
    ['Already in the state of fuel supply to resume,the command is not running!', 'failed'],
    ['Unknown command', 'failed'],
  ] as const)('%s -> %s', (text, outcome) => {
    expect(outcomeOfText(text)).toBe(outcome);
  });

  it('keeps the text and a copy of the raw bytes, which may be a view into a read buffer', () => {
    const read = Buffer.from('7878aa', 'hex');
    const reply = textReply(7, 'OK', read);
    read[0] = 0;
    expect(reply).toEqual({ matchKey: 7, outcome: 'succeeded', text: 'OK', resultCode: null, raw: Buffer.from('7878aa', 'hex') });
  });
});
