import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { candidateValues, lenientQuery, listParam, splitQuery, strictQuery } from './query.js';
import { PageQuery } from './pagination.js';

const schema = Type.Object({
  ...PageQuery,
  flag: Type.Optional(Type.Boolean()),
  rate: Type.Optional(Type.Number()),
  status: Type.Optional(Type.Array(Type.String())),
  name: Type.Optional(Type.String()),
});

const refuses = (raw: string) => {
  try {
    strictQuery(raw, schema as never);
  } catch (e) {
    return (e as { status: number; code: string; message: string });
  }
  return undefined;
};

describe('strict query parser (spec 1, General query rules)', () => {
  it('rule 1: a present-but-invalid value is 400 (misspelled boolean, non-numeric limit)', () => {
    expect(refuses('flag=ture')).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(refuses('limit=ten')).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(refuses('rate=1.5x')).toMatchObject({ status: 400 });
    expect(refuses('limit=0x10')).toMatchObject({ status: 400 });
  });

  it('rule 1: an absent parameter means no filter (nothing refused)', () => {
    expect(refuses('')).toBeUndefined();
    expect(refuses('name=x')).toBeUndefined();
  });

  it('rule 4: malformed URL query syntax is rejected rather than partially interpreted', () => {
    expect(refuses('name=a%ZZ')).toMatchObject({ status: 400, message: expect.stringContaining('percent escape') });
    expect(refuses('name=a;b')).toMatchObject({ status: 400, message: expect.stringContaining(';') });
    expect(refuses('name=%E0%A4%A')).toMatchObject({ status: 400 });
    expect(refuses('name=%C3%28')).toMatchObject({ status: 400 }); // invalid UTF-8
  });

  it('rule 4: encoded cursor characters + & ; decode exactly', () => {
    expect(lenientQuery('cursor=a%2Bb%26c%3Bd')).toEqual({ cursor: 'a+b&c;d' });
    expect(refuses('cursor=a%2Bb%26c%3Bd')).toBeUndefined();
  });

  it('repeated parameters are detected; only array-typed (repeatable) filters may repeat', () => {
    expect(refuses('name=a&name=b')).toMatchObject({ status: 400, message: expect.stringContaining('at most once') });
    expect(refuses('status=a&status=b')).toBeUndefined();
  });

  it('rule 5: repeated-or-comma values OR within one parameter', () => {
    expect(listParam(['a,b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(listParam('a')).toEqual(['a']);
    expect(listParam(undefined)).toBeUndefined();
    expect(() => listParam('a,,b')).toThrow(/empty/);
  });
});

describe('cursor and limit (spec 1, Pagination of agent evidence)', () => {
  it('rule 1: omit the cursor, or send it once empty, for the first page', () => {
    expect(refuses('cursor=')).toBeUndefined();
    expect(refuses('')).toBeUndefined();
  });

  it('rule 2: two or more cursor parameters (identical, two empty, empty plus non-empty) are 400 "at most once"', () => {
    for (const raw of ['cursor=a&cursor=a', 'cursor=&cursor=', 'cursor=&cursor=abc']) {
      expect(refuses(raw)).toMatchObject({ status: 400, code: 'invalid_request', message: 'cursor must be provided at most once' });
    }
  });

  it('rule 4: limit at most once, a non-empty unsigned 32-bit integer', () => {
    expect(refuses('limit=')).toMatchObject({ status: 400 });
    expect(refuses('limit=1&limit=2')).toMatchObject({ status: 400 });
    expect(refuses('limit=-1')).toBeUndefined(); // syntax is fine; the schema's minimum refuses it (see HTTP tests)
    expect(refuses('limit=4294967295')).toBeUndefined();
  });
});

describe('project selector reading (spec 1, Authentication 3)', () => {
  it('finds a selector hidden in a repeated parameter', () => {
    expect(candidateValues('project_id=a&project_id=b', 'project_id')).toEqual({ values: ['a', 'b'], malformed: false });
  });

  it('finds a selector hidden behind an unescaped semicolon and marks it malformed', () => {
    expect(candidateValues('x=1;project_id=b', 'project_id')).toEqual({ values: ['b'], malformed: true });
    expect(candidateValues('project_id=a;b', 'project_id').malformed).toBe(true);
  });

  it('marks a selector with an invalid percent escape malformed', () => {
    expect(candidateValues('project_id=%zz', 'project_id').malformed).toBe(true);
  });

  it('a malformed unrelated field does not touch the selector', () => {
    expect(candidateValues('name=%zz&project_id=a', 'project_id')).toEqual({ values: ['a'], malformed: false });
  });

  it('splitQuery keeps malformed pairs marked instead of dropping them', () => {
    expect(splitQuery('a=1&b=%zz').map((p) => Boolean(p.malformed))).toEqual([false, true]);
  });
});
