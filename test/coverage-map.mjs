// tap's coverage map. The slow suites start real service processes through tsx; tap follows
// them into those children, whose differently compiled copies of src/ do not merge with the
// in-process coverage. They are not counted: the other suites cover src/ in process.
export default testFile => /\.slow\.test\.ts$/.test(testFile) ? null : []
