import { describe, expect, it } from 'vitest';
import { redactText, redactUrl, secretsOf } from '../../src/rest-source/redact.js';

describe('redactUrl', () => {
  it.each([
    ['a plain URL is unchanged', 'https://api.example.com/v1/items?page=2&sort=id', [], 'https://api.example.com/v1/items?page=2&sort=id'],
    ['userinfo', 'https://ann:pw@api.example.com/v1', [], 'https://[redacted]@api.example.com/v1'],
    ['userinfo without a path', 'https://ann:pw@api.example.com', [], 'https://[redacted]@api.example.com'],
    ['access_token', 'https://a.example/x?access_token=abc&page=2', [], 'https://a.example/x?access_token=[redacted]&page=2'],
    ['api_key and apiKey', 'https://a.example/x?api_key=1&apiKey=2', [], 'https://a.example/x?api_key=[redacted]&apiKey=[redacted]'],
    [
      'client_secret, password',
      'https://a.example/x?client_secret=s&password=p',
      [],
      'https://a.example/x?client_secret=[redacted]&password=[redacted]',
    ],
    [
      'signatures (S3, Azure SAS)',
      'https://a.example/x?X-Amz-Signature=s&sig=t&sv=2020',
      [],
      'https://a.example/x?X-Amz-Signature=[redacted]&sig=[redacted]&sv=2020',
    ],
    [
      'a configured API key parameter name',
      'https://a.example/x?code=7&subscription=abc',
      ['subscription'],
      'https://a.example/x?code=7&subscription=[redacted]',
    ],
    ['an encoded parameter name', 'https://a.example/x?api%5Fkey=1', [], 'https://a.example/x?api%5Fkey=[redacted]'],
    [
      'an encoded name after an encoded value',
      'https://a.example/x?cursor=a%3D&%74oken=1',
      [],
      'https://a.example/x?cursor=a%3D&%74oken=[redacted]',
    ],
    ['an encoded value is no name', 'https://a.example/x?cursor=%74oken%3D&page=2', [], 'https://a.example/x?cursor=%74oken%3D&page=2'],
    ['an encoded name without a value', 'https://a.example/x?page=1&%74oken', [], 'https://a.example/x?page=1&%74oken'],
    ['the fragment is kept', 'https://a.example/x?token=1#top', [], 'https://a.example/x?token=[redacted]#top'],
    ['a parameter without a value', 'https://a.example/x?token&page=1', [], 'https://a.example/x?token&page=1'],
    ['not a URL', 'items?page=2', [], 'items?page=2'],
  ])('%s', (_, url, names, expected) => {
    expect(redactUrl(url, names)).toBe(expected);
  });
});

describe('redactText', () => {
  it('redacts URLs in a message and every known secret value, also URL-encoded', () => {
    const secrets = secretsOf({ type: 'apiKey', in: 'query', name: 'k', value: 'va lue/1' });
    const text = 'page 1 (GET https://a.example/x?k=va%20lue%2F1&page=1): echoed "va lue/1" and va%20lue%2F1';
    expect(redactText(text, secrets)).toBe('page 1 (GET https://a.example/x?k=[redacted]&page=1): echoed "[redacted]" and [redacted]');
  });

  it('redacts a basic password and the encoded credentials', () => {
    const secrets = secretsOf({ type: 'basic', username: 'ann', password: 'hunter22' });
    expect(redactText(`bad password hunter22 in ${Buffer.from('ann:hunter22').toString('base64')}`, secrets)).toBe(
      'bad password [redacted] in [redacted]',
    );
  });

  it('leaves very short secret values alone rather than redacting every occurrence of a letter', () => {
    expect(redactText('a bearer token: abc', secretsOf({ type: 'bearer', token: 'abc' }))).toBe('a bearer token: abc');
  });
});

describe('redaction keeps what is not secret', () => {
  it('leaves pagination cursors named like tokens readable', () => {
    expect(redactUrl('https://api.example.com/odata/Customers?$skiptoken=3&nextPageToken=abc&pageToken=q&access_token=zz')).toBe(
      'https://api.example.com/odata/Customers?$skiptoken=3&nextPageToken=abc&pageToken=q&access_token=[redacted]',
    );
  });

  it('keeps the punctuation after a URL in a sentence', () => {
    expect(
      redactText('page 3 (GET https://api.example.com/x?access_token=abc): the service answered 404', { values: [], params: [] }),
    ).toBe('page 3 (GET https://api.example.com/x?access_token=[redacted]): the service answered 404');
  });
});
