#!/usr/bin/env python3
"""Optuna TPE as a benchmark peer: an ask/tell loop over JSON lines on stdin/stdout.

Benchmarks only; lm-bench itself never depends on Optuna. The parent writes one line
{"knobs": [{"name": ..., "choices": [...]}, ...], "direction": "maximize"|"minimize"},
then for each trial this script writes {"trial": i, "config": {...}} and reads back
{"value": number} or {"failed": true}. After the budget it writes {"done": true}.
Any error goes to stderr with a non-zero exit.
"""
import argparse
import json
import sys

# Protocol lines go to the real stdout only; anything else that prints (a library, a stray
# debug print) is sent to stderr so it cannot be mistaken for a protocol line.
PROTOCOL_OUT = sys.stdout
sys.stdout = sys.stderr

PROG = 'optuna_tpe.py'


def fail(message):
    print(f'{PROG}: {message}', file=sys.stderr)
    sys.exit(1)


def read_message():
    line = sys.stdin.readline()
    if not line:
        raise RuntimeError('stdin closed before the expected message')
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise RuntimeError(f'bad JSON line from the parent: {e}') from e


def send(message):
    PROTOCOL_OUT.write(json.dumps(message, allow_nan=False) + '\n')
    PROTOCOL_OUT.flush()


def collides(tokens):
    # Python treats True == 1 == 1.0 and False == 0 as one key, which would make
    # Optuna's choice lookup ambiguous; None is fine as a key but is replaced anyway.
    seen = []
    for t in tokens:
        for s in seen:
            if t == s:
                return True
        seen.append(t)
    return False


class Knob:
    """One categorical knob, with the tokens Optuna sees mapped back to the JSON choices."""

    def __init__(self, spec, index):
        if not isinstance(spec, dict):
            raise ValueError(f'knob {index} is not an object')
        name = spec.get('name')
        choices = spec.get('choices')
        if not isinstance(name, str) or not name:
            raise ValueError(f'knob {index} has no name')
        if not isinstance(choices, list) or not choices:
            raise ValueError(f'knob {name!r} has no choices')
        for c in choices:
            if c is not None and not isinstance(c, (bool, int, float, str)):
                raise ValueError(f'knob {name!r} has a choice that is not a scalar: {c!r}')
        self.name = name
        self.choices = choices
        # A null choice becomes a string token no real choice uses, so Optuna never has to
        # store None; if the raw choices clash under Python equality, every choice becomes
        # its JSON text instead (distinct JSON texts never clash).
        sentinel = '__null__'
        while sentinel in [c for c in choices if isinstance(c, str)]:
            sentinel = '_' + sentinel + '_'
        tokens = [sentinel if c is None else c for c in choices]
        if collides(tokens):
            tokens = [json.dumps(c) for c in choices]
            if len(set(tokens)) != len(tokens):
                raise ValueError(f'knob {name!r} has duplicate choices')
        self.tokens = tokens

    def suggest(self, trial):
        token = trial.suggest_categorical(self.name, self.tokens)
        # Look up by position with an identity-and-type check, since True == 1 in Python.
        for t, c in zip(self.tokens, self.choices):
            if type(t) is type(token) and t == token:
                return c
        raise RuntimeError(f'Optuna suggested {token!r} for {self.name!r}, which is not a choice')


def main():
    parser = argparse.ArgumentParser(prog=PROG, description='Optuna TPE ask/tell peer over JSON lines.')
    parser.add_argument('--seed', type=int, required=True)
    parser.add_argument('--budget', type=int, required=True)
    parser.add_argument('--startup', type=int, default=None,
                        help="TPE's n_startup_trials (default: Optuna's own)")
    args = parser.parse_args()
    if args.budget < 0:
        parser.error('--budget must be >= 0')
    if args.startup is not None and args.startup < 0:
        parser.error('--startup must be >= 0')

    try:
        import optuna
    except ImportError as e:
        fail(f'optuna is not importable by {sys.executable} ({e}); install python3-optuna')

    try:
        optuna.logging.set_verbosity(optuna.logging.WARNING)

        header = read_message()
        if not isinstance(header, dict) or not isinstance(header.get('knobs'), list):
            raise ValueError('first line must be an object with a "knobs" array')
        direction = header.get('direction', 'maximize')
        if direction not in ('maximize', 'minimize'):
            raise ValueError(f'direction must be "maximize" or "minimize", got {direction!r}')
        knobs = [Knob(spec, i) for i, spec in enumerate(header['knobs'])]
        names = [k.name for k in knobs]
        if len(set(names)) != len(names):
            raise ValueError('knob names must be unique')

        sampler_args = {'seed': args.seed}
        if args.startup is not None:
            sampler_args['n_startup_trials'] = args.startup
        study = optuna.create_study(direction=direction,
                                    sampler=optuna.samplers.TPESampler(**sampler_args))

        for i in range(args.budget):
            trial = study.ask()
            config = {k.name: k.suggest(trial) for k in knobs}
            send({'trial': i, 'config': config})
            reply = read_message()
            if not isinstance(reply, dict):
                raise ValueError(f'trial {i}: reply must be an object')
            if reply.get('failed') is True:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            value = reply.get('value')
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f'trial {i}: reply needs a numeric "value" or "failed": true')
            study.tell(trial, float(value))

        send({'done': True})
    except Exception as e:  # noqa: BLE001 - every failure must surface as one stderr line
        fail(f'{type(e).__name__}: {e}')


if __name__ == '__main__':
    main()
