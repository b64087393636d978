'use strict';
// passk's resident TypeScript compiler (resident.py): tsc's own program, kept in one
// node for a worker slot's builds, with the standard library's declarations parsed once.
// A build of tsc's is 1.5 s on one CPU, nearly all of it reading and parsing those
// declarations; here a build is the candidate's file alone.
//
// Once started, it says it is ready with an empty frame, after parsing the library for
// the options it was started with (the builds' own). Each request on standard input is
// the source's file name, its text, and the build's tsc arguments; the reply on standard output is tsc's exit status, its diagnostics as
// tsc prints them, and each file it wrote, by its path. Frames are a count of items,
// then each item's length and bytes, all big-endian. The compiler sees the source and
// the standard library's declarations, and no other file: nothing a build wrote or read
// reaches the next, and a `/// <reference path>` to any other file is not found.
//
// What a build checks is tsc's: the library's declarations too, where the candidate's
// file declares a global name the library declares (its own `Array` merged into the
// library's can break the library's) or the program holds other files than the
// library's own set for the options (a `/// <reference lib>` can bring in one that
// conflicts with it), and otherwise the candidate's file alone, since the library's
// diagnostics are then those of the library by itself: none, as checked once per set
// of options (where they are not none, every build checks them).
//
//     node ts_compile.js TSC OPTION...
const fs = require('fs');
const path = require('path');

const ts = require(path.dirname(path.dirname(fs.realpathSync(process.argv[2]))));

const REQUESTS = 0;
const REPLIES = 1;
// Where the candidate's file is, for the compiler: a directory nothing else is in.
const HERE = '/passk-build';
const LIBRARY = path.dirname(ts.getDefaultLibFilePath({}));
// The standard library's files, parsed once, by name and language version.
const parsed = new Map();
// The names the standard library declares at the global scope, once it is parsed.
const libraryNames = new Set();
const namesTaken = new Set();
// For each set of options, the files of a program whose own file is empty, and whether
// that program has no diagnostics.
const baselines = new Map();

function readExactly(size) {
  const buffer = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const read = fs.readSync(REQUESTS, buffer, got, size - got, null);
    if (read === 0) return null;
    got += read;
  }
  return buffer;
}

function readRequest() {
  const head = readExactly(4);
  if (head === null) return null;
  const items = [];
  for (let count = head.readUInt32BE(0); count > 0; count--) {
    items.push(readExactly(readExactly(4).readUInt32BE(0)));
  }
  return items;
}

function writeReply(items) {
  const parts = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(items.length);
  parts.push(count);
  for (const item of items) {
    const bytes = Buffer.isBuffer(item) ? item : Buffer.from(String(item), 'utf8');
    const size = Buffer.alloc(4);
    size.writeUInt32BE(bytes.length);
    parts.push(size, bytes);
  }
  const reply = Buffer.concat(parts);
  let sent = 0;
  while (sent < reply.length) sent += fs.writeSync(REPLIES, reply, sent, reply.length - sent);
}

function inLibrary(file) {
  return path.dirname(path.resolve(HERE, file)) === LIBRARY;
}

function declaredNames(file) {
  const names = [];
  for (const statement of file.statements) {
    if (statement.name && ts.isIdentifier(statement.name)) names.push(statement.name.text);
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      }
    }
  }
  return names;
}

// Whether the candidate's file adds to what the library declares: an augmentation of the
// global scope or of a module, or, in a script (no import or export, so that its
// declarations are global), a name the library declares too.
function mergesWithLibrary(file) {
  for (const statement of file.statements) {
    if (ts.isModuleDeclaration(statement) && (statement.flags & ts.NodeFlags.GlobalAugmentation
                                              || ts.isStringLiteral(statement.name))) {
      return true;
    }
  }
  return !ts.isExternalModule(file) && declaredNames(file).some((name) => libraryNames.has(name));
}

function baseline(name, options) {
  const key = JSON.stringify(options);
  if (!baselines.has(key)) {
    const empty = program(name, '', options, []);
    const files = new Set(empty.getSourceFiles().map((file) => file.fileName));
    baselines.set(key, { files, clean: ts.getPreEmitDiagnostics(empty).length === 0 });
  }
  return baselines.get(key);
}

function program(name, text, options, written) {
  const sourcePath = path.resolve(HERE, name);
  const host = ts.createCompilerHost(options);
  host.getCurrentDirectory = () => HERE;
  host.fileExists = (file) => path.resolve(HERE, file) === sourcePath || (inLibrary(file) && fs.existsSync(file));
  host.readFile = (file) => path.resolve(HERE, file) === sourcePath ? text
    : inLibrary(file) ? fs.readFileSync(file, 'utf8') : undefined;
  host.directoryExists = (directory) => [HERE, LIBRARY].includes(path.resolve(HERE, directory));
  host.getDirectories = () => [];
  host.realpath = (file) => file;
  host.getSourceFile = (file, version) => {
    if (path.resolve(HERE, file) === sourcePath) return ts.createSourceFile(file, text, version, false);
    if (!inLibrary(file)) return undefined;
    const key = `${version} ${file}`;
    if (!parsed.has(key)) {
      const library = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), version, false);
      parsed.set(key, library);
      if (!namesTaken.has(file)) {
        namesTaken.add(file);
        for (const declared of declaredNames(library)) libraryNames.add(declared);
      }
    }
    return parsed.get(key);
  };
  host.writeFile = (file, data) => {
    written.push([path.relative(HERE, path.resolve(HERE, file)), Buffer.from(data, 'utf8')]);
  };
  return ts.createProgram({ rootNames: [name], options, host });
}

function compile(request) {
  const name = request[0].toString('utf8');
  const text = request[1].toString('utf8');
  const command = ts.parseCommandLine(request.slice(2).map((item) => item.toString('utf8')));
  const options = command.options;
  const written = [];
  const built = program(name, text, options, written);
  const source = built.getSourceFile(name);
  const usual = baseline(name, options);
  const alone = source && usual.clean && !mergesWithLibrary(source)
    && built.getSourceFiles().every((file) => file === source || usual.files.has(file.fileName));
  // As tsc's emitFilesAndReportErrors: the semantic diagnostics only where the syntax
  // is right.
  const checked = alone ? source : undefined;
  let diagnostics = [...command.errors, ...built.getConfigFileParsingDiagnostics(), ...built.getOptionsDiagnostics(),
                     ...built.getSyntacticDiagnostics(checked)];
  if (diagnostics.length === 0) {
    diagnostics = [...built.getGlobalDiagnostics(), ...built.getSemanticDiagnostics(checked)];
  }
  const emitted = built.emit(source);
  diagnostics = ts.sortAndDeduplicateDiagnostics([...diagnostics, ...emitted.diagnostics]);
  const said = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => HERE,
    getNewLine: () => '\n',
  });
  const errors = diagnostics.some((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  // tsc's: errors with nothing written, errors with the output written.
  const status = !errors ? 0 : emitted.emitSkipped ? 1 : 2;
  const reply = [String(status), said];
  for (const [file, data] of written) reply.push(file, data);
  return reply;
}

// Ready once the library is parsed and checked for the build's options: that is not a
// build's time.
baseline('main.ts', ts.parseCommandLine(process.argv.slice(3)).options);
writeReply([]);
for (let request = readRequest(); request !== null; request = readRequest()) {
  writeReply(compile(request));
}
