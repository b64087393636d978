'use strict';
// The npm package `js-md5`, as much of it as HumanEval-X's JavaScript problem 162 uses
// (`md5(text)`, hex), from node's own crypto: its harness's environment has the package
// installed, and no npm registry is reachable where passk runs.
const crypto = require('crypto');

function md5(message) {
  return crypto.createHash('md5').update(message).digest('hex');
}
md5.hex = md5;
module.exports = md5;
