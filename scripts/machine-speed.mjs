// How fast this machine is right now, for reading a timing of the suite: the same CPU-bound loop
// alone, then twice at once in two processes. On a virtual machine whose host is busy the loops take
// longer, in CPU time too (the guest counts the time the host took as its own), and most when two run
// at once; the suite's times grow with them. Prints one line; plain Node (no packages).
// Usage: node scripts/machine-speed.mjs [label]
import { spawn } from 'node:child_process';
import process from 'node:process';

const LOOP = 'const t=process.cpuUsage(),w=Date.now();let x=0;for(let i=0;i<1.5e9;i++)x+=i&1;const c=process.cpuUsage(t);console.log(((c.user+c.system)/1e6).toFixed(2),((Date.now()-w)/1e3).toFixed(2),x>0)';

/** One loop in a child process: its CPU and wall seconds. */
function loop() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LOOP], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('close', () => {
      const [cpu, wall] = out.trim().split(' ').map(Number);
      resolve({ cpu, wall });
    });
  });
}

const alone = await loop();
const both = await Promise.all([loop(), loop()]);
const label = process.argv[2] ? `${process.argv[2]}: ` : '';
const show = ({ cpu, wall }) => `${wall.toFixed(2)} s (CPU ${cpu.toFixed(2)} s)`;
process.stdout.write(`machine speed ${label}one loop ${show(alone)}; two at once ${both.map(show).join(' and ')}. On a quiet machine the three take about the same; longer loops at once mean the two cores are not both wholly ours.\n`);
