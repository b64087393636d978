"""passk's interpreter side: the driver each worker slot keeps warm.

One file a job:
    worker.py     the loop that takes requests from the harness and answers them
    sample.py     one sample's processes, watched under one deadline, and its verdict
    candidate.py  the candidate's process: its code, and the calls it answers
    judge.py      the judge: the problem's code and tests, and the verdict
    judge_process.py  the judge's process, kept across samples, and the driver's handle
    harness_link.py   the judge's own line to the harness: suites in, sealed details out
    calls.py      suites of calls: each input one call, judged against its expected output
    evalplus.py   EvalPlus's comparisons, oracles and input rebuilding
    stdio.py      standard-input problems: a run per test, and comparing what it printed
    programs.py   programs in other languages: built in the sandbox, then run there
    resident.py   compilers kept running for a slot's builds (javac's, tsc's), at level full
    java_compile.java  javac through the compiler API, one build per request
    ts_compile.js tsc's program with the standard library parsed once, one build per request
    js_serve.js   JavaScript: the candidate's process, answering the judge's calls
    js_judge.js   JavaScript: the judge's tests, with a stand-in for the entry point
    js_md5.js     the npm package js-md5, as HumanEval-X's JavaScript uses it
    sh_serve.sh   Bash: the candidate's shell, answering the judge's calls
    sh_judge.sh   Bash: the judge's tests, with a function in place of the entry point
    kept.py       the most recently used suites, kept in step across processes
    wire.py       the plain data that crosses between judge and candidate
    handles.py    what only the candidate defines, used by the tests through handles
    expected.py   a phase's expected outputs in the judge, kept as their encodings
    sources.py    each sample's code, handed over as a memory file only it reads
    forking.py    forking a sample's process without the interpreter's at-fork hooks
    cgroup.py     the sample's control group, where the run has one
    seccomp.py    the system-call filter candidates run under
    confine.py    what a forked process gives up before it runs anything
    cleanup.py    killing what a sample left running, and emptying its directory
"""
