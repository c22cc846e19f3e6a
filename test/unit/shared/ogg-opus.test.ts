// The Ogg Opus writer (RFC 7845): its files are read back by Debian's ffmpeg, a decoder that checks
// every page's CRC, honours the pre-skip and the last page's end trimming, and keeps the channels;
// the tones the test encoded must come back, in their channel, for exactly as long as they were.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpusScript from 'opusscript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { LIBOPUS_PRE_SKIP, OGG_OPUS_RATE, OggOpusWriter, oggCrc32, oggOpusFile, opusPacketSamples } from '../../../shared/ogg-opus';

const run = promisify(execFile);
const onePacket = () => encode(tones([440], FRAME), 1)[0]!;
const FRAME = 960;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'softphone-ogg-opus-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Interleaved 16-bit PCM: each channel its own tone, at 0.3 of full scale. */
function tones(hzPerChannel: readonly number[], samples: number): Int16Array {
  const channels = hzPerChannel.length;
  const pcm = new Int16Array(samples * channels);
  for (let i = 0; i < samples; i++) {
    hzPerChannel.forEach((hz, c) => (pcm[i * channels + c] = Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * hz * i) / OGG_OPUS_RATE))));
  }
  return pcm;
}

/** 20 ms Opus packets of the PCM, the last frame padded with silence; one more frame of silence pushes the encoder's lookahead out. */
function encode(pcm: Int16Array, channels: 1 | 2): Buffer[] {
  const encoder = new OpusScript(OGG_OPUS_RATE, channels, OpusScript.Application.AUDIO);
  encoder.setBitrate(channels * 48_000);
  const frames = Math.ceil(pcm.length / channels / FRAME) + 1;
  const padded = new Int16Array(frames * FRAME * channels);
  padded.set(pcm);
  const packets: Buffer[] = [];
  for (let f = 0; f < frames; f++) {
    packets.push(Buffer.from(encoder.encode(Buffer.from(padded.buffer, f * FRAME * channels * 2, FRAME * channels * 2), FRAME)));
  }
  encoder.delete();
  return packets;
}

/** ffmpeg's decoding of the file into 16-bit PCM, one array per channel; its complaints fail the test. */
async function decode(file: Uint8Array, channels: 1 | 2): Promise<Int16Array[]> {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.opus`);
  await writeFile(path, file);
  const { stdout, stderr } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 's16le', '-ac', String(channels), '-ar', '48000', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(stderr.toString('utf8')).toBe('');
  const samples = stdout.length / 2 / channels;
  const out = Array.from({ length: channels }, () => new Int16Array(samples));
  for (let i = 0; i < samples; i++) for (let c = 0; c < channels; c++) out[c]![i] = stdout.readInt16LE((i * channels + c) * 2);
  return out;
}

/** The middle second: away from the encoder's start-up and the fade of the last frame. */
const middle = (samples: Int16Array) => samples.subarray(Math.floor(samples.length / 2) - OGG_OPUS_RATE / 2, Math.floor(samples.length / 2) + OGG_OPUS_RATE / 2);

interface Page {
  flags: number;
  granule: number;
  serial: number;
  sequence: number;
  crc: number;
  packets: Uint8Array[];
  bytes: Uint8Array;
}

/** Splits a file into its pages and each page into its packets (RFC 3533 6), as a demuxer does. */
function pages(file: Uint8Array): Page[] {
  const out: Page[] = [];
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  for (let at = 0; at < file.length; ) {
    expect(String.fromCharCode(...file.subarray(at, at + 4))).toBe('OggS');
    const count = file[at + 26]!;
    const lacing = file.subarray(at + 27, at + 27 + count);
    let body = at + 27 + count;
    const packets: Uint8Array[] = [];
    let current = 0;
    for (const value of lacing) {
      current += value;
      if (value < 255) {
        packets.push(file.subarray(body, body + current));
        body += current;
        current = 0;
      }
    }
    expect(current).toBe(0);
    out.push({
      flags: file[at + 5]!,
      granule: view.getUint32(at + 6, true) + view.getUint32(at + 10, true) * 0x1_0000_0000,
      serial: view.getUint32(at + 14, true),
      sequence: view.getUint32(at + 18, true),
      crc: view.getUint32(at + 22, true),
      packets,
      bytes: file.subarray(at, body),
    });
    at = body;
  }
  return out;
}

function fileOf(packets: Iterable<Uint8Array>, options: Parameters<typeof oggOpusFile>[1]): Uint8Array {
  const file = oggOpusFile(packets, options);
  if (!file.ok) throw new Error(file.error.message);
  return file.value;
}

describe('a mono file', () => {
  test('decodes to the tone, exactly as long as it was encoded', async () => {
    const samples = 2 * OGG_OPUS_RATE + 1234;
    const file = fileOf(encode(tones([880], samples), 1), { channels: 1, samples });
    const [mono] = await decode(file, 1);
    expect(mono!.length).toBe(samples);
    const heard = middle(mono!);
    expect(toneAmplitude(heard, OGG_OPUS_RATE, 880)).toBeGreaterThan(0.2);
    expect(toneAmplitude(heard, OGG_OPUS_RATE, 660)).toBeLessThan(0.01);
    expect(toneAmplitude(heard, OGG_OPUS_RATE, 1320)).toBeLessThan(0.01);
  });

  test('starts where the audio started: the pre-skip takes away the encoder’s lookahead', async () => {
    // Silence, then the tone from 0.5 s on: the decoded tone begins within a millisecond of it.
    const samples = OGG_OPUS_RATE;
    const pcm = tones([1000], samples).map((v, i) => (i < samples / 2 ? 0 : v));
    const [mono] = await decode(fileOf(encode(pcm, 1), { channels: 1, samples }), 1);
    const onset = mono!.findIndex((v) => Math.abs(v) > 2000);
    expect(Math.abs(onset - samples / 2)).toBeLessThan(48);
  });
});

describe('a stereo file', () => {
  test('keeps each channel’s tone in its channel', async () => {
    const samples = 3 * OGG_OPUS_RATE;
    const file = fileOf(encode(tones([600, 1320], samples), 2), { channels: 2, samples });
    const [left, right] = await decode(file, 2);
    expect(left!.length).toBe(samples);
    expect(right!.length).toBe(samples);
    expect(toneAmplitude(middle(left!), OGG_OPUS_RATE, 600)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middle(left!), OGG_OPUS_RATE, 1320)).toBeLessThan(0.01);
    expect(toneAmplitude(middle(right!), OGG_OPUS_RATE, 1320)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middle(right!), OGG_OPUS_RATE, 600)).toBeLessThan(0.01);
  });

  test('streams a long recording page by page, a page at most a second behind', async () => {
    // A minute of the same three seconds: the writer never looks inside a packet past its TOC.
    const second = encode(tones([500, 1000], OGG_OPUS_RATE), 2).slice(0, 50);
    const sent: Uint8Array[] = [];
    const writer = new OggOpusWriter({ channels: 2, sink: (page) => sent.push(page) });
    for (let s = 0; s < 60; s++) {
      for (const packet of second) expect(writer.write(packet).ok).toBe(true);
      // Headers, then every whole second but the last, which waits for the next packet or the end.
      expect(sent.length).toBe(2 + s);
    }
    expect(writer.samples).toBe(60 * OGG_OPUS_RATE - LIBOPUS_PRE_SKIP);
    writer.end();
    const file = Buffer.concat(sent);
    const [left, right] = await decode(file, 2);
    expect(left!.length).toBe(60 * OGG_OPUS_RATE - LIBOPUS_PRE_SKIP);
    expect(toneAmplitude(middle(left!), OGG_OPUS_RATE, 500)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middle(right!), OGG_OPUS_RATE, 1000)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middle(right!), OGG_OPUS_RATE, 500)).toBeLessThan(0.01);
  });
});

describe('the pages', () => {
  const samples = 2 * OGG_OPUS_RATE + 500;
  const packets = encode(tones([440], samples), 1);

  test('OpusHead alone on a first page, OpusTags on the second, audio from the third', () => {
    const all = pages(fileOf(packets, { channels: 1, samples, serial: 0x1234_5678, vendor: 'softphone tests', comments: ['TITLE=Voicemail'] }));
    const [head, tags, ...audio] = all;
    expect(head!.flags).toBe(0x02);
    expect(head!.granule).toBe(0);
    expect(head!.packets).toHaveLength(1);
    const opusHead = Buffer.from(head!.packets[0]!);
    expect(opusHead.toString('ascii', 0, 8)).toBe('OpusHead');
    expect(opusHead.length).toBe(19);
    expect(opusHead[8]).toBe(1);
    expect(opusHead[9]).toBe(1);
    expect(opusHead.readUInt16LE(10)).toBe(LIBOPUS_PRE_SKIP);
    expect(opusHead.readUInt32LE(12)).toBe(48_000);
    expect(opusHead.readInt16LE(16)).toBe(0);
    expect(opusHead[18]).toBe(0);
    expect(tags!.flags).toBe(0);
    expect(tags!.granule).toBe(0);
    expect(Buffer.from(tags!.packets[0]!).toString('ascii', 0, 8)).toBe('OpusTags');
    expect(all.map((p) => p.serial)).toEqual(all.map(() => 0x1234_5678));
    expect(all.map((p) => p.sequence)).toEqual(all.map((_, i) => i));
    expect(audio.flatMap((p) => p.packets).map((p) => Buffer.from(p))).toEqual(packets);
  });

  test('each audio page holds at most a second; its granule is the end of its last packet (the pre-skip counted), the last one trimmed', () => {
    const audio = pages(fileOf(packets, { channels: 1, samples })).slice(2);
    // 2 s + 500 samples, padded, and a frame more: 102 packets of 20 ms in pages of 50.
    expect(audio.map((p) => p.packets.length)).toEqual([50, 50, 2]);
    expect(audio.map((p) => p.flags)).toEqual([0, 0, 0x04]);
    expect(audio.map((p) => p.granule)).toEqual([50 * FRAME, 100 * FRAME, LIBOPUS_PRE_SKIP + samples]);
  });

  test('every page’s CRC is Ogg’s CRC-32 of the page with the field zeroed', () => {
    for (const page of pages(fileOf(packets, { channels: 1, samples }))) {
      const zeroed = Uint8Array.from(page.bytes);
      zeroed.fill(0, 22, 26);
      expect(oggCrc32(zeroed)).toBe(page.crc);
    }
  });

  test('the comments are what ffprobe reads, in UTF-8; the vendor comes first', async () => {
    const path = join(dir, 'tags.opus');
    await writeFile(path, fileOf(packets, { channels: 1, samples, vendor: 'softphone tests', comments: ['TITLE=Messagerie vocale — Zoë', 'ARTIST=Ada Lovelace'] }));
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream_tags:format_tags', '-of', 'json', path]);
    const tags = (JSON.parse(stdout) as { streams: { tags: Record<string, string> }[] }).streams[0]!.tags;
    expect(tags).toEqual({ TITLE: 'Messagerie vocale — Zoë', ARTIST: 'Ada Lovelace' });
    // ffmpeg does not show the vendor string: read it where RFC 7845 5.2 puts it.
    const opusTags = Buffer.from(pages(await readFile(path))[1]!.packets[0]!);
    expect(opusTags.readUInt32LE(8)).toBe('softphone tests'.length);
    expect(opusTags.toString('utf8', 12, 12 + 'softphone tests'.length)).toBe('softphone tests');
    expect(opusTags.readUInt32LE(12 + 'softphone tests'.length)).toBe(2);
  });
});

describe('Ogg’s CRC-32', () => {
  test('is CRC-32 with polynomial 0x04C11DB7, unreflected, from zero, without a final XOR', () => {
    // The published check value of CRC-32/CKSUM (the same, but for its final XOR) is 0x765E7680.
    expect(oggCrc32(new Uint8Array(Buffer.from('123456789', 'ascii')))).toBe(~0x765e7680 >>> 0);
    expect(oggCrc32(new Uint8Array(0))).toBe(0);
  });

  test('agrees with the CRC of every page of a file ffmpeg writes', async () => {
    const path = join(dir, 'by-ffmpeg.opus');
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=3', '-c:a', 'libopus', path]);
    const theirs = pages(new Uint8Array(await readFile(path)));
    expect(theirs.length).toBeGreaterThan(2);
    for (const page of theirs) {
      const zeroed = Uint8Array.from(page.bytes);
      zeroed.fill(0, 22, 26);
      expect(oggCrc32(zeroed)).toBe(page.crc);
    }
  });
});

describe('packets', () => {
  test('each packet’s length comes from its TOC byte (RFC 6716 3.1)', () => {
    const samplesOf = (bytes: number[]) => {
      const samples = opusPacketSamples(Uint8Array.from(bytes));
      return samples.ok ? samples.value : samples.error.message;
    };
    expect(samplesOf([(0 << 3) | 0, 1])).toBe(480); // SILK 10 ms
    expect(samplesOf([(3 << 3) | 0, 1])).toBe(2880); // SILK 60 ms
    expect(samplesOf([(13 << 3) | 1, 1, 1])).toBe(1920); // hybrid 20 ms, two frames
    expect(samplesOf([(16 << 3) | 2, 1, 1])).toBe(240); // CELT 2.5 ms, two frames
    expect(samplesOf([(31 << 3) | 3, 6])).toBe(5760); // CELT 20 ms, six frames
    expect(samplesOf([(31 << 3) | 3, 7])).toMatch(/more than an Opus packet may hold/);
    expect(samplesOf([(31 << 3) | 3, 0])).toMatch(/one frame or more/);
    expect(samplesOf([])).toMatch(/at least one byte/);
  });

  test('a packet that is not Opus, or one after the end, is refused and nothing is written', () => {
    const sent: Uint8Array[] = [];
    const writer = new OggOpusWriter({ channels: 1, sink: (page) => sent.push(page) });
    expect(writer.write(new Uint8Array(0))).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'packet' } });
    expect(sent).toHaveLength(0);
    expect(writer.write(onePacket()).ok).toBe(true);
    writer.end();
    const written = sent.length;
    expect(writer.write(onePacket())).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    writer.end();
    expect(sent).toHaveLength(written);
    expect(pages(Buffer.concat(sent)).at(-1)!.flags).toBe(0x04);
  });

  test('a stream without audio still ends: its headers and an empty last page', () => {
    const all = pages(fileOf([], { channels: 1 }));
    expect(all.map((p) => p.flags)).toEqual([0x02, 0, 0x04]);
    expect(all.map((p) => p.granule)).toEqual([0, 0, 0]);
    expect(all[2]!.packets).toHaveLength(0);
  });
});

