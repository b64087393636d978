-- wrk's script for bench/serve.py: each connection sends the HumanEval programs in turn
-- (one JSON body per line of the first argument) and checks each answer's status against
-- the reference's verdict (one per line of the second argument), finding which program
-- an answer is for by the number the program printed first.

local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("id", #threads)
end

local function lines(path)
   local found = {}
   for line in io.lines(path) do
      if line ~= "" then
         table.insert(found, line)
      end
   end
   return found
end

function init(args)
   bodies = lines(args[1])
   expected = lines(args[2])
   -- Threads start at different programs, so that they do not ask for the same at once.
   next_body = (id or 0) * 97
   right = 0
   wrong = 0
   sandbox_errors = 0
   unknown = 0
   headers = { ["Content-Type"] = "application/json" }
end

function request()
   next_body = next_body % #bodies + 1
   return wrk.format("POST", nil, headers, bodies[next_body])
end

function response(status, _, body)
   if status ~= 200 then
      return
   end
   local verdict = body:match('^{"status":"(%a+)"')
   local number = tonumber(body:match("passk%-bench (%d+)"))
   if verdict == "SandboxError" then
      sandbox_errors = sandbox_errors + 1
   elseif number == nil or verdict == nil then
      unknown = unknown + 1
   elseif expected[number] == verdict then
      right = right + 1
   else
      wrong = wrong + 1
   end
end

function done(summary, latency, _)
   local counts = { right = 0, wrong = 0, sandbox_errors = 0, unknown = 0 }
   for _, thread in ipairs(threads) do
      for name, _ in pairs(counts) do
         counts[name] = counts[name] + thread:get(name)
      end
   end
   local errors = summary.errors
   local seconds = summary.duration / 1e6
   io.write(string.format(
      'passk-bench-report {"requests":%d,"seconds":%.3f,"requests_per_second":%.3f,"p50_ms":%.3f,'
         .. '"p99_ms":%.3f,"right":%d,"wrong":%d,"not_answered":%d,"sandbox_errors":%d,'
         .. '"unidentified":%d,"socket_errors":%d,"not_200":%d}\n',
      summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
      latency:percentile(99) / 1000, counts.right, counts.wrong,
      errors.connect + errors.read + errors.write + errors.timeout + errors.status + counts.sandbox_errors
         + counts.unknown,
      counts.sandbox_errors, counts.unknown, errors.connect + errors.read + errors.write + errors.timeout,
      errors.status))
end
