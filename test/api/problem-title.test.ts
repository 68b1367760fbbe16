// Problem titles come from node:http's STATUS_CODES with RFC 9110's names where they differ.
import { describe, expect, it } from 'vitest';
import { statusTitle } from '../../api/problem.js';

describe('problem titles', () => {
  it.each([
    [400, 'Bad Request'],
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [404, 'Not Found'],
    [405, 'Method Not Allowed'],
    [408, 'Request Timeout'],
    [409, 'Conflict'],
    [413, 'Content Too Large'],
    [414, 'URI Too Long'],
    [415, 'Unsupported Media Type'],
    [422, 'Unprocessable Content'],
    [429, 'Too Many Requests'],
    [431, 'Request Header Fields Too Large'],
    [500, 'Internal Server Error'],
    [503, 'Service Unavailable'],
  ])('%i is %s', (status, title) => {
    expect(statusTitle(status)).toBe(title);
  });

  it('falls back to "Error" for a status without a reason phrase', () => {
    expect(statusTitle(599)).toBe('Error');
  });
});
