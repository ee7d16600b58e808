"""Files in and out: :mod:`.kinds` tells the files of a log directory apart by name, :mod:`.inputs` finds the
segments a command is given (paths, globs, directories, object stores), :mod:`.outputs` writes new files,
atomically, never over an input."""
