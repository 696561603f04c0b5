from scorer.cli import console

console()
