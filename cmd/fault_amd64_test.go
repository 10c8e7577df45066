package cmd

// readSyscall is read(2)'s number, as /proc/PID/task/TID/syscall shows it.
const readSyscall = "0"
