-- Why a browser crashed, and the resource budget it ran with, so that any node showing
-- the record shows them. Browsers that crashed before were not told apart: their process
-- ended on its own, as far as anyone knew. Those recorded before ran without a budget.
ALTER TABLE browsers ADD COLUMN crash_reason TEXT;
UPDATE browsers SET crash_reason = 'process_exited' WHERE status = 'crashed';
ALTER TABLE browsers ADD COLUMN budget_memory_mib INTEGER;
ALTER TABLE browsers ADD COLUMN budget_max_processes INTEGER;
ALTER TABLE browsers ADD COLUMN budget_cpus REAL;
