'use strict';
// The candidate's side of a judged JavaScript program (see programs.py): loads the
// candidate's code, then answers the judge's calls of its entry point, one frame each,
// until the judge hangs up. Every answer is data, in v8's structured serialization: no
// object, function or getter of the candidate's reaches the judge, which runs the tests
// in a process of its own.
//
//     node js_serve.js SOURCE ENTRY_POINT
const fs = require('fs');
const Module = require('module');
const path = require('path');
const v8 = require('v8');
const vm = require('vm');

const FROM_JUDGE = 3;
const TO_JUDGE = 4;
const HEADER = 4;

const [source, entry] = process.argv.slice(2);

function readExactly(fd, size) {
  const buffer = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const read = fs.readSync(fd, buffer, got, size - got, null);
    if (read === 0) return null;
    got += read;
  }
  return buffer;
}

function send(message) {
  let payload;
  try {
    payload = v8.serialize(message);
  } catch (error) {
    payload = v8.serialize(['unserializable', String(error && error.message)]);
  }
  const header = Buffer.alloc(HEADER);
  header.writeUInt32BE(payload.length);
  const frame = Buffer.concat([header, payload]);
  let sent = 0;
  while (sent < frame.length) sent += fs.writeSync(TO_JUDGE, frame, sent, frame.length - sent);
}

function described(error) {
  if (error instanceof Error) return [String(error.name), String(error.message)];
  return ['thrown value', String(error)];
}

// Packages the suites' own environments install, provided here (see js_md5.js).
const provided = { 'js-md5': path.join(__dirname, 'js_md5.js') };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return Object.hasOwn(provided, request) ? provided[request] : resolve.call(this, request, ...rest);
};
globalThis.require = require;
globalThis.module = module;
globalThis.exports = module.exports;
let candidate;
try {
  vm.runInThisContext(fs.readFileSync(source, 'utf8'), { filename: source });
  candidate = vm.runInThisContext(`typeof ${entry} === 'function' ? ${entry} : undefined`);
} catch (error) {
  send(['load', ...described(error)]);
  process.exit(0);
}
send(['ready', candidate !== undefined]);
for (;;) {
  const header = readExactly(FROM_JUDGE, HEADER);
  if (header === null) break;
  const payload = readExactly(FROM_JUDGE, header.readUInt32BE(0));
  if (payload === null) break;
  const [, args] = v8.deserialize(payload);
  let answer;
  try {
    answer = ['return', candidate(...args)];
  } catch (error) {
    answer = ['raise', ...described(error)];
  }
  send(answer);
}
process.exit(0);
