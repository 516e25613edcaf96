import { LinesPerTurn } from '../../src/common/logging/lines-per-turn';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function sink() {
  const writes: string[] = [];
  let flushed = 0;
  return {
    writes,
    flushed: () => flushed,
    target: { write: (text: string) => writes.push(text), flushSync: () => flushed++ },
  };
}

describe('LinesPerTurn', () => {
  it('writes the lines of one turn together, in order, once the turn ends', async () => {
    const { writes, target } = sink();
    const lines = new LinesPerTurn(target, () => {});
    lines.write('a\n');
    lines.write('b\n');
    lines.write('c\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n']);
  });

  it('writes each turn on its own, and nothing when a turn logged nothing', async () => {
    const { writes, target } = sink();
    const lines = new LinesPerTurn(target, () => {});
    lines.write('a\n');
    await nextTurn();
    await nextTurn();
    lines.write('b\n');
    await nextTurn();
    expect(writes).toEqual(['a\n', 'b\n']);
  });

  it('writes at once when a turn has gathered MAX_PENDING characters, keeping the order', async () => {
    const { writes, target } = sink();
    const lines = new LinesPerTurn(target, () => {});
    const long = 'x'.repeat(LinesPerTurn.MAX_PENDING - 2) + '\n';
    lines.write('a\n');
    lines.write(long);
    expect(writes).toEqual(['a\n' + long]);
    lines.write('b\n');
    await nextTurn();
    expect(writes).toEqual(['a\n' + long, 'b\n']);
  });

  it('writes what is pending, and flushes its target, when the process exits', () => {
    const { writes, flushed, target } = sink();
    let atExit: (() => void) | undefined;
    const lines = new LinesPerTurn(target, (listener) => (atExit = listener));
    lines.write('last words\n');
    atExit?.();
    expect(writes).toEqual(['last words\n']);
    expect(flushed()).toBe(1);
  });
});
