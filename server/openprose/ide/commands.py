"""The names of the commands that the code lenses run.

Kept apart from ide/lens.py so the language server can register its command without
importing the analysis at start-up."""

RUN_COMMAND = "prose.run"  # the server runs the program
CLIENT_RUN_COMMAND = "prose.runProgram"  # the client does (VS Code: in a terminal)
CLIENT_RUN_WITH_INPUTS_COMMAND = "prose.runProgramWithInputs"
