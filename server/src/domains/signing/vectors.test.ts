/**
 * Published test vectors run against our primitives: RFC 8032 section 7.1 (Ed25519: TEST 1, 2, 3, 1024
 * and SHA(abc)) against the signer's Ed25519, checked again by an independent implementation
 * (@noble/ed25519); the JSON Canonicalization Scheme test data (cyberphone json-canonicalization
 * `testdata`: arrays, french, structures, unicode, values, weird) and the number serialization samples of
 * RFC 8785 appendix B against `canonicalJson`, cross-checked with `json-canonicalize`.
 */
import * as noble from '@noble/ed25519';
import { canonicalize as otherJcs } from 'json-canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson, nanoTimestamp, sha256, signingInput, SIGNING_DOMAINS } from './byte-contract.js';
import { ed25519Sign, ed25519Verify, jwkThumbprint, privateKeyFromSeed, publicX } from './keys.js';

const hex = (h: string) => Buffer.from(h, 'hex');

const TEST_1024_MESSAGE =
  '08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1' +
  'e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d' +
  '658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a' +
  '7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e' +
  '06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc10' +
  '3b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1' +
  '85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d' +
  '502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270' +
  '88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089b' +
  'eccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba' +
  'b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969b' +
  'e3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7' +
  '51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988d' +
  'cda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df' +
  'f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7' +
  '984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4' +
  '88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac09' +
  '43bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f' +
  'b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f161' +
  '0e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d' +
  'b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8ca' +
  'c60c905c15fc910840b94c00a0b9d0';

/** RFC 8032 section 7.1. */
const RFC8032 = [
  {
    name: 'TEST 1',
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'TEST 2',
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'TEST 3',
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    public: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature: '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
  {
    name: 'TEST 1024',
    secret: 'f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5',
    public: '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
    message: TEST_1024_MESSAGE,
    signature: '0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03',
  },
  {
    name: 'TEST SHA(abc)',
    secret: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    public: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    signature: 'dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704',
  },
];

describe('RFC 8032 section 7.1 Ed25519 test vectors', () => {
  it('the 1024 vector message is the RFC one (1023 bytes)', () => expect(hex(TEST_1024_MESSAGE).length).toBe(1023));

  for (const v of RFC8032) {
    it(`${v.name}: our key derives the public key and signs the exact signature; an independent Ed25519 verifies it`, async () => {
      const key = privateKeyFromSeed(hex(v.secret));
      expect(Buffer.from(publicX(key), 'base64url').toString('hex')).toBe(v.public);
      const sig = ed25519Sign(key, hex(v.message));
      expect(Buffer.from(sig, 'base64url').toString('hex')).toBe(v.signature);
      expect(sig).not.toMatch(/=/);
      expect(await noble.verifyAsync(hex(v.signature), hex(v.message), hex(v.public))).toBe(true);
      expect(ed25519Verify(Buffer.from(v.public, 'hex').toString('base64url'), hex(v.message), sig)).toBe(true);
      // one flipped bit of the signature fails
      const bad = hex(v.signature);
      bad[10] ^= 1;
      expect(ed25519Verify(Buffer.from(v.public, 'hex').toString('base64url'), hex(v.message), bad.toString('base64url'))).toBe(false);
    });
  }

  it('RFC 7638 thumbprint of the TEST 1 key is the SHA-256 of {"crv","kty","x"} in order', () => {
    const x = hex(RFC8032[0].public).toString('base64url');
    expect(jwkThumbprint(x)).toBe(sha256(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).toString('base64url'));
    expect(jwkThumbprint(x)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

/** cyberphone/json-canonicalization testdata: input -> expected output. */
const JCS = [
  { name: 'arrays', input: '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]', output: '[56,{"1":[],"10":null,"d":true}]' },
  {
    name: 'french',
    input: '{\n  "peach": "This sorting order",\n  "péché": "is wrong according to French",\n  "pêche": "but canonicalization MUST",\n  "sin":   "ingnore locale"\n}\n',
    output: '{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ingnore locale"}',
  },
  {
    name: 'structures',
    input: '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n  "a": { },\n  "111": [ { } ],\n  "A": { }\n}',
    output: '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
  },
  { name: 'unicode', input: '{\n  "Unnormalized Unicode":"\\u1e0d\\u0307"\n}\n', output: '{"Unnormalized Unicode":"\u1e0d\u0307"}' },
  {
    name: 'values',
    input: '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
    output: '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
  },
  {
    name: 'weird',
    input:
      '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}\n',
    output:
      '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","\u{1F602}":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  },
];

/** RFC 8785 appendix B: IEEE 754 bit patterns and their serialization (NaN and Infinity have none). */
const APPENDIX_B: [string, string][] = [
  ['0000000000000000', '0'],
  ['8000000000000000', '0'],
  ['0000000000000001', '5e-324'],
  ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'],
  ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'],
  ['c340000000000000', '-9007199254740992'],
  ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'],
  ['44b52d02c7e14af6', '1e+23'],
  ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'],
  ['444b1ae4d6e2ef4f', '999999999999999900000'],
  ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ['3eb0c6f7a0b5ed8d', '0.000001'],
  ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'],
  ['41b3de4355555555', '333333333.3333333'],
  ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'],
  ['becbf647612f3696', '-0.0000033333333333333333'],
  ['43143ff3c1cb0959', '1424953923781206.2'],
];
const fromBits = (h: string) => hex(h).readDoubleBE(0);

describe('RFC 8785 (JCS) test data against canonicalJson', () => {
  for (const v of JCS) {
    it(`testdata ${v.name}: the canonical form is the expected output byte for byte`, () => {
      const out = canonicalJson(JSON.parse(v.input));
      expect(out).toBe(v.output);
      expect(Buffer.from(out, 'utf8').equals(Buffer.from(v.output, 'utf8'))).toBe(true);
      expect(out).toBe(otherJcs(JSON.parse(v.input)));
    });
  }

  it('appendix B: every finite number sample serializes as the RFC says; NaN and Infinity are refused', () => {
    for (const [bits, want] of APPENDIX_B) {
      expect(canonicalJson(fromBits(bits)), bits).toBe(want);
      expect(canonicalJson([fromBits(bits)]), bits).toBe(`[${want}]`);
    }
    expect(() => canonicalJson(fromBits('7fffffffffffffff'))).toThrow();
    expect(() => canonicalJson(fromBits('7ff0000000000000'))).toThrow();
  });
});

describe('the byte contract helpers', () => {
  it('"timestamps are UTC RFC 3339 with exactly nine fractional digits (trailing zeros kept)"', () => {
    expect(nanoTimestamp('2026-03-10T12:00:00Z')).toBe('2026-03-10T12:00:00.000000000Z');
    expect(nanoTimestamp('2026-03-10T14:00:00.1+02:00')).toBe('2026-03-10T12:00:00.100000000Z');
    expect(nanoTimestamp('2026-03-10T12:00:00.123456789Z')).toBe('2026-03-10T12:00:00.123456789Z');
    expect(() => nanoTimestamp('2026-03-10T12:00:00.1234567891Z')).toThrow();
  });

  it('"a signature made for one domain must fail in the other"', () => {
    const key = privateKeyFromSeed(hex(RFC8032[0].secret));
    const x = publicX(key);
    const digest = sha256('{"a":1}');
    const sig = ed25519Sign(key, signingInput(SIGNING_DOMAINS.abom, digest));
    expect(ed25519Verify(x, signingInput(SIGNING_DOMAINS.abom, digest), sig)).toBe(true);
    expect(ed25519Verify(x, signingInput(SIGNING_DOMAINS.checkpoint, digest), sig)).toBe(false);
  });
});
