/** A one-line progress bar on stderr; silent when stderr is not a terminal (CI logs stay clean). */
export class ProgressBar {
  private last = 0;
  constructor(private readonly enabled = !!process.stderr.isTTY) {}

  update(label: string, fraction: number, detail = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 80 && fraction < 1) return;
    this.last = now;
    const width = 24;
    const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
    process.stderr.write(
      `\r\x1b[2K${label.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
        `${Math.round(fraction * 100)}% ${detail}`,
    );
  }

  done(): void {
    if (this.enabled) process.stderr.write('\r\x1b[2K');
  }
}
