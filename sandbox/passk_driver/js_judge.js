'use strict';
// passk's judge for JavaScript (see programs.py): runs the problem's own helpers and
// tests with, in place of the entry point, a stand-in that sends each call's arguments
// to the candidate's process as data and returns its answer as data. The verdict goes
// to a descriptor only this process holds; the candidate's process can neither reach
// this one nor write there, so no exit, patched `assert` or handler of the candidate's
// can make its tests pass.
//
//     node js_judge.js ENTRY_POINT    (the problem's helpers on descriptor 6, its tests on 7)
//     node js_judge.js ENTRY_POINT TESTS    (helpers and tests in one file: TypeScript's,
//                                            transpiled; see ts_assembly.py)
const fs = require('fs');
const v8 = require('v8');
const vm = require('vm');

const TO_CANDIDATE = 3;
const FROM_CANDIDATE = 4;
const RECORD = 5;
const HELPERS = 6;
const TESTS = 7;
const HEADER = 4;
const TEST_FILE = '<test>';
const DETAIL_CAP = 1000;

const [entry, testsFile] = process.argv.slice(2);
const problem = testsFile === undefined
  ? { helpers: fs.readFileSync(HELPERS, 'utf8'), test: fs.readFileSync(TESTS, 'utf8') }
  : { helpers: '', test: fs.readFileSync(testsFile, 'utf8') };
let calls = 0;

// No frame of a right answer comes near this; a larger header is not one.
const FRAME_CAP = 1 << 30;

// The text of a value the candidate chose, whatever it is: its own toString may throw.
function text(value) {
  try {
    return String(value);
  } catch (error) {
    return '<unprintable>';
  }
}

// Node's assertion messages are laid out over lines ("Expected values to be loosely
// deep-equal:\n\n-1\n\nshould loosely deep-equal\n\n0"); a verdict's detail is one.
function oneLine(value) {
  return value.replace(/\s*\n\s*/g, ' ');
}

function shorten(value) {
  const shown = text(value);
  return shown.length > DETAIL_CAP ? `${shown.slice(0, DETAIL_CAP)}...` : shown;
}

// The verdict, written once; the process ends with it, so that no test code runs after.
function record(status, detail) {
  fs.writeSync(RECORD, JSON.stringify({ status, detail: shorten(detail), calls }) + '\n');
  process.exit(0);
}

function readExactly(fd, size) {
  const buffer = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    let read;
    try {
      read = fs.readSync(fd, buffer, got, size - got, null);
    } catch (error) {
      return null;
    }
    if (read === 0) return null;
    got += read;
  }
  return buffer;
}

function receive() {
  const header = readExactly(FROM_CANDIDATE, HEADER);
  if (header === null) record('gone', 'the candidate\'s process ended before it answered');
  const size = header.readUInt32BE(0);
  if (size > FRAME_CAP) record('error', `sent the judge a frame of ${size} bytes`);
  const payload = readExactly(FROM_CANDIDATE, size);
  if (payload === null) record('gone', 'the candidate\'s process ended before it answered');
  let message;
  try {
    message = v8.deserialize(payload);
  } catch (error) {
    record('error', `sent the judge an unreadable answer (${text(error && error.message)})`);
  }
  if (!Array.isArray(message) || typeof message[0] !== 'string') record('error', 'sent the judge an unreadable answer');
  return message;
}

function send(message) {
  const payload = v8.serialize(message);
  const header = Buffer.alloc(HEADER);
  header.writeUInt32BE(payload.length);
  const frame = Buffer.concat([header, payload]);
  let sent = 0;
  try {
    while (sent < frame.length) sent += fs.writeSync(TO_CANDIDATE, frame, sent, frame.length - sent);
  } catch (error) {
    record('gone', 'the candidate\'s process ended before it was called');
  }
}

// Where in the tests an error was thrown: the test file's line, as the user reads it.
function testLine(error) {
  const stack = error && typeof error.stack === 'string' ? error.stack : '';
  const found = stack.match(/<test>:(\d+)/);
  if (!found) return '';
  // The whole statement, over as many lines as its parentheses span (HumanEval-X
  // writes long asserts over several).
  const lines = problem.test.split('\n');
  let statement = '';
  let depth = 0;
  for (let at = Number(found[1]) - 1; at < lines.length; at++) {
    statement += (statement ? ' ' : '') + lines[at].trim();
    for (const c of lines[at]) depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth <= 0) break;
  }
  return statement ? ` at line ${found[1]} of the tests: ${statement}` : '';
}

function standIn(...args) {
  calls += 1;
  let request;
  try {
    request = ['call', args];
    v8.serialize(request);
  } catch (error) {
    record('unjudgeable', `the tests pass the candidate what is not data (${error.message})`);
  }
  send(request);
  const answer = receive();
  if (answer[0] === 'return') return answer[1];
  if (answer[0] === 'raise') {
    const thrown = new Error(text(answer[2]));
    thrown.name = text(answer[1]);
    throw thrown;
  }
  if (answer[0] === 'unserializable') record('failed', `returned what is not data (${text(answer[1])})`);
  record('error', `sent the judge a ${JSON.stringify(answer[0])} message`);
}

// An error the tests throw later (in a callback), or one of the judge's own.
process.on('uncaughtException', (error) => {
  record('failed', `${text(error && error.name ? error.name : 'Error')}: ${oneLine(text(error && error.message))}${testLine(error)}`);
});

const first = receive();
if (first[0] === 'load') record('failed', `raised ${text(first[1])} while its code was loaded: ${text(first[2])}`);
if (first[0] !== 'ready') record('error', `sent the judge a ${JSON.stringify(first[0])} message before the tests`);
if (first[1] !== true) record('failed', `ReferenceError: ${entry} is not defined`);

globalThis.require = require;
globalThis.module = module;
// HumanEval-X's JavaScript tests check with console.assert, which only prints: a failed
// one fails the tests here, where a harness that reads the exit status passes it.
console.assert = (condition, ...message) => {
  if (!condition) {
    const error = new Error(message.length ? message.join(' ') : 'console.assert failed');
    error.name = 'AssertionError';
    throw error;
  }
};
globalThis[entry] = standIn;
try {
  if (problem.helpers) vm.runInThisContext(problem.helpers, { filename: '<prompt>' });
  vm.runInThisContext(problem.test, { filename: TEST_FILE });
} catch (error) {
  const name = text(error && error.name ? error.name : 'Error');
  const message = oneLine(text(error && error.message !== undefined ? error.message : error));
  record('failed', `${name}: ${message}${testLine(error)}`);
}
// What the tests left to run later (a promise's callbacks) runs before the verdict.
setImmediate(() => record('passed', ''));
